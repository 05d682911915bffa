// @ts-check
/**
 * Typed client of the triad auth service: openapi-fetch over the types that openapi-typescript
 * generates from api/auth.yaml into ./schema.d.ts (`make sdk`).
 *
 * @module
 */
import createClient from "openapi-fetch";

/**
 * @typedef {import("./schema.js").paths} paths
 * @typedef {import("./schema.js").components["schemas"]} schemas
 * @typedef {import("openapi-fetch").Client<paths>} AuthClient
 */

/**
 * createAuthClient returns a client of the auth service at options.baseUrl.
 *
 * @param {import("openapi-fetch").ClientOptions} options
 * @returns {AuthClient}
 */
export function createAuthClient(options) {
  return createClient(options);
}
