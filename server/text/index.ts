export { neutraliseTerminalText, neutraliseTerminalBytes, hasTerminalControls } from "./terminal";
export type { NeutralisedText } from "./terminal";
