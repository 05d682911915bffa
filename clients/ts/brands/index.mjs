// @ts-check
/**
 * Typed client of the triad brands API: openapi-fetch over the types that openapi-typescript
 * generates from api/brands.yaml into ./schema.d.ts (`make sdk`).
 *
 * @module
 */
import createClient from "openapi-fetch";

/**
 * @typedef {import("./schema.js").paths} paths
 * @typedef {import("./schema.js").components["schemas"]} schemas
 * @typedef {import("openapi-fetch").Client<paths>} BrandsClient
 */

/**
 * createBrandsClient returns a client of the brands API at options.baseUrl.
 *
 * @param {import("openapi-fetch").ClientOptions} options
 * @returns {BrandsClient}
 */
export function createBrandsClient(options) {
  return createClient(options);
}
