// @ts-check
/**
 * Typed client of the triad orders API: openapi-fetch over the types that openapi-typescript
 * generates from api/orders.yaml into ./schema.d.ts (`make sdk`). Every path, parameter, body and
 * response is checked by the TypeScript compiler against the spec.
 *
 * @module
 */
import createClient from "openapi-fetch";

/**
 * @typedef {import("./schema.js").paths} paths
 * @typedef {import("./schema.js").components["schemas"]} schemas
 * @typedef {import("openapi-fetch").Client<paths>} OrdersClient
 */

/**
 * createOrdersClient returns a client of the orders API at options.baseUrl.
 *
 * @param {import("openapi-fetch").ClientOptions} options
 * @returns {OrdersClient}
 */
export function createOrdersClient(options) {
  return createClient(options);
}
