// test-group: serial — it mostly waits (held calls, approval windows and expiry: ~30 s of wall for 5-11 CPU-s), so it runs in the
// serial lane beside the browser tests, which has time to spare, instead of holding a worker of the busier first step.
import { defineMcpActionSuite } from "./actions-suite";

defineMcpActionSuite("pglite");
