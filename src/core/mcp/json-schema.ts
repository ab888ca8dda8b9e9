import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

/** The one JSON Schema validator (the SDK's Ajv) for servers' schemas: tool inputs and elicitation forms; it caches what it compiles. */
export const jsonSchemaValidators = new AjvJsonSchemaValidator();
