/**
 * The leaf schemas our zod schemas are built from, one instance each. A zod schema is immutable:
 * `zString.max(10)` or `zInt.optional()` derives a new schema and leaves the leaf as it was, so one
 * instance serves every field. Each zod 4 instance costs about 1 KB, and the tools and the runtime
 * build about 2,000 at start: sharing the leaves builds about 780 fewer (docs/architecture.md,
 * "Build and serving", has what that saves).
 */
import * as z from 'zod';

export const zString = z.string();
export const zNumber = z.number();
/** A safe integer, as `z.number().int()` takes it. */
export const zInt = z.int();
export const zBoolean = z.boolean();
export const zUnknown = z.unknown();
