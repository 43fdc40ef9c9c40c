import { defineMcpHubSuite } from "./hub-suite";

defineMcpHubSuite("postgres");
