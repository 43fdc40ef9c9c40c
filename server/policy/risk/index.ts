export { assessShellRisk, assessShellRiskSync, initShellRisk, MAX_SHELL_TEXT_LENGTH } from "./assess";
export { RISK_LEVELS, RiskLevelSchema, compareRisk, maxRisk, isAtLeast } from "./levels";
export type { RiskLevel } from "./levels";
export { CustomRiskRuleSchema } from "./types";
export type { AssessOptions, CustomRiskRule, RiskReason, RiskSpan, RiskVerdict } from "./types";
export { lookupCommand, catalogueNames } from "./catalogue";
export type { CommandCategory, CommandSpec, Effect } from "./catalogue";
