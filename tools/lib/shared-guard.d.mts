export const SHARED_GUARD_MESSAGE: string;
