export { BodyRefusedError, bodyRefusalResponse, isJsonObject, jsonObjectOf, parseJsonBytes, readBoundedBody, readJsonObject } from "./body";
export type { BodyRefusal, BodyResult } from "./body";
export { CONTENT_SECURITY_POLICY, SECURITY_HEADERS, STRICT_TRANSPORT_SECURITY, pageContentSecurityPolicy } from "./headers";
export { allowedHostnames, hostAllowed, hostnameOf } from "./host-allow";
export { safeNext } from "./safe-next";
export { checkSameOrigin } from "./same-origin";
export type { OriginVerdict } from "./same-origin";
