import { defineMcpActionSuite } from "./actions-suite";

defineMcpActionSuite("postgres");
