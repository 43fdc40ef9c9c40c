export const TEST_FILES: string[];
export const TEST_EXCLUDE: string[];
export const SERIAL_FOLDERS: string[];
export const SERIAL_MARKER: RegExp;
export function hasSerialMarker(text: string): boolean;
export function markedSerialFiles(root: string): string[];
export function serialGlobs(root: string): string[];
