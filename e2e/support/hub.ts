/** Where the Playwright config's hub lives (shared by the config and the tests). */
import path from "node:path";

export const E2E_PORT = Number(process.env.E2E_PORT ?? 8790);
export const E2E_DATA_DIR = path.join(import.meta.dirname, "..", "..", ".cache", `e2e-data-${E2E_PORT}`);
/** `localhost`, not 127.0.0.1: WebAuthn refuses IP addresses as relying-party ids. */
export const E2E_BASE_URL = `http://localhost:${E2E_PORT}`;
