/**
 * Splits a JSON Lines file (fixture or simulation input) into numbered lines.
 * Lines end with "\n" (a trailing "\r" is JSON whitespace and is left to the parser);
 * a final newline is optional; every other empty or blank line is an error.
 */
import { invalidInput } from '../kernel/amends-error.js';

export interface InputLine {
  /** 1-based, as an editor shows it. */
  line: number;
  text: string;
}

export function splitInputLines(text: string): InputLine[] {
  if (text === '') return [];
  const pieces = text.split('\n');
  if (text.endsWith('\n')) pieces.pop();
  return pieces.map((piece, i) => {
    if (piece.trim() === '') throw invalidInput(`line ${i + 1}: blank line`);
    return { line: i + 1, text: piece };
  });
}
