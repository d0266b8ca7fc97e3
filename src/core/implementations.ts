/** The implementation of a seam named in a record; a name this build has none for is a bug or a newer record. */
export function implementationOf<T>(table: Partial<Record<string, T>>, name: string, seam: string): T {
  const found = table[name];
  if (found === undefined) throw new Error(`the ${name} ${seam} is not available in this build`);
  return found;
}
