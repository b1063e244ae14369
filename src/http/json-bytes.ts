/**
 * JSON's structural characters as UTF-8 bytes, for scanners of raw bodies: every byte of a
 * multi-byte UTF-8 character is 0x80 or more, so none can be mistaken for one of these.
 */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COLON = 0x3a;
export const COMMA = 0x2c;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
