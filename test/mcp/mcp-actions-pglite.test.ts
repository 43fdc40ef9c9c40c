import { defineMcpActionSuite } from "./actions-suite";

defineMcpActionSuite("pglite");
