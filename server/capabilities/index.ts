// Public surface of server/capabilities. Listed by name; see README.md for layering.
export {
  ACTIVATIONS,
  CAPABILITY_ID_PATTERN,
  EgressNetworkSchema,
  MANIFEST_LIMITS,
  ManifestSchema,
  OPERATION_NAME_PATTERN,
  OperationSchema,
  RESERVED_OPERATION_NAMES,
  SandboxSchema,
  TRUST_BOUNDARIES,
  parseManifest,
  parseManifestText,
  safeParseManifest,
} from "./manifest-schema";
export type {
  Activation,
  Manifest,
  ManifestIssue,
  ManifestParseResult,
  OperationDeclaration,
  SandboxDeclaration,
  TrustBoundary,
} from "./manifest-schema";

export { ARTIFACT_PROPERTY, INPUT_SCHEMA_LIMITS, artifactArgumentNames, checkInputSchema, isOperationInputSchema, toJsonPointer, validateArguments } from "./input-schema";
export type {
  ArgumentIssue,
  ArgumentValidationResult,
  InputSchemaNode,
  OperationInputSchema,
  SchemaIssue,
  ValidatableOperation,
} from "./input-schema";

export { createCapabilityRegistry, loadCapabilityRegistry, readManifestDirectory } from "./registry";
export { hubCapabilityRegistry } from "./hub-registry";
export { ADMIN_EGRESS_SCOPE, capabilityEgressConfiguration, loadEnabledCapabilities, setCapabilityEgress, setCapabilityEnabled } from "./enablement";
export type { CapabilityChange, CapabilityEgressChange } from "./enablement";
export type {
  CapabilityListing,
  CapabilityRegistry,
  CapabilityRegistryOptions,
  ListOptions,
  LoadCapabilityRegistryOptions,
  ManifestSource,
  OperationResolution,
  RegisteredCapability,
  RuntimeManifestSource,
} from "./registry";
export { BUILTIN_MANIFESTS } from "./builtin";
export { capabilityConsequence } from "./consequence";
export type { CapabilityConsequence } from "./consequence";

export {
  READINESS_STATES,
  computeHostReadiness,
  computeReadiness,
  degradesHubHealth,
  isReadyOnHost,
  summariseCapabilityHealth,
} from "./readiness";
export type {
  CapabilityHealthSummary,
  CapabilityReadiness,
  HostReadiness,
  HostReadinessState,
  HostReport,
  ReadinessOptions,
  ReadinessState,
  WorkerReport,
} from "./readiness";

export { ENFORCEMENT_TIERS, KERNEL_FEATURES, kernelRequirementsFor, tierSatisfies } from "../trust/kernel-requirements";
export type { HostEnforcementTier, KernelFeature, KernelRequirements } from "../trust/kernel-requirements";

export {
  BUILTIN_ADAPTERS,
  JOB_PAYLOAD_SCHEMA,
  builtinAdapterRegistry,
  createAdapterRegistry,
  createPassthroughAdapter,
  createTableAdapter,
  normaliseWorkspacePath,
} from "./adapters";
export type { AdapterRegistry, CapabilityAdapter, JobPayload, JobPayloadInput, PreparedArguments } from "./adapters";

export { COMPILED_POLICY_SCHEMA, capabilityPolicy, compileSandboxPolicy } from "./policy-compile";
export type {
  CompileSandboxPolicyInput,
  CompiledNetwork,
  CompiledSandboxPolicy,
  SandboxNarrowing,
  SandboxScope,
} from "./policy-compile";

export { egressRuleWithin, intersectEgressRules, parseEgressRule } from "../trust/egress";
export type { EgressRule } from "../trust/egress";
export { parseCpusToMillis, parseSizeToBytes } from "./sandbox-values";
export { checkLabelsListed, checkSnapshotReference, compileMounts, MAX_MOUNTS, normaliseMounts, splitLabelPath } from "./host-mounts";
export type { CompiledMount, HostPathCeiling, MountMode, MountRequest, SnapshotReference } from "./host-mounts";
