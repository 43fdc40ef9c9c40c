/** The export file's format id (its own module so the browser verifier does not pull in the file writer). */
export const EXPORT_FORMAT = "leasehold-ledger-export/1";
