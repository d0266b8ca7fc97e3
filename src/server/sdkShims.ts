/**
 * What the bundle (scripts/build.ts) serves in place of the SDK's `@modelcontextprotocol/server/_shims`
 * for Node: the same two exports, `process` and the default JSON Schema validator. The SDK's own
 * module imports its Ajv validator statically (Ajv is a third of the SDK's code), so every start
 * would load and compile it, while this server validates with it only a 2025 client's answer to a
 * confirmation (src/tools/confirm.ts), which most sessions never see. Here Ajv is required from the
 * installed SDK on the first validation: off the start-up path, in memory only once needed.
 * Sources run by tsx use the SDK's module.
 */
import { createRequire } from 'node:module';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/server';

export { default as process } from 'node:process';

const requireInstalled = createRequire(import.meta.url);

export class DefaultJsonSchemaValidator implements jsonSchemaValidator {
  private ajv?: jsonSchemaValidator;

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    this.ajv ??= new (requireInstalled('@modelcontextprotocol/server/validators/ajv') as typeof import('@modelcontextprotocol/server/validators/ajv')).AjvJsonSchemaValidator();
    return this.ajv.getValidator<T>(schema);
  }
}
