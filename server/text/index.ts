export {
  escapeInvisible,
  describeInvisibleCharacters,
  logLine,
  neutraliseTerminalText,
  neutraliseOneLine,
  neutraliseTerminalBytes,
  hasTerminalControls,
  hasInvisibleCharacters,
  invisibleCharacterSpans,
  isInvisibleCodePoint,
} from "./terminal";
export type { EscapeOptions, NeutralisedText } from "./terminal";
