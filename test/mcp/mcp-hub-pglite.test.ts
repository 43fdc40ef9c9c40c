import { defineMcpHubSuite } from "./hub-suite";

defineMcpHubSuite("pglite");
