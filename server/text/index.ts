export {
  neutraliseTerminalText,
  neutraliseOneLine,
  neutraliseTerminalBytes,
  hasTerminalControls,
  hasInvisibleCharacters,
  invisibleCharacterSpans,
  isInvisibleCodePoint,
} from "./terminal";
export type { NeutralisedText } from "./terminal";
