/** Routes and schemas.ts files reach the one ajv instance (src/json-schema.ts) through here, as the HTTP side of validation. */
export * from '../json-schema';
