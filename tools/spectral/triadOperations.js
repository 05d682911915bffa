// Spectral function for the triad specs (rule triad-operation-contract in .spectral.yaml): checks
// that each operation documents the refusals every triad route can produce and shows examples.
//
// - 500: any handler can fail internally (web.Internal answers it).
// - 503: every operation that needs the database answers database_unavailable while PostgreSQL
//   cannot be reached (web.Internal); an operation that never touches it says so with
//   `x-triad-database: false`.
// - 400: routes with a body, or with a parameter the request validation (web.Validator, kin-openapi)
//   can reject (required, typed other than string, or constrained), can be refused as malformed.
// - 401: routes whose effective security requirement is not empty refuse unauthenticated callers.
// - 413: routes with a body sit behind the server-wide body limit (web.LimitBody).
// - every JSON, form or text body (request or response) carries an example (or examples), so the
//   specs serve as documentation and as mock data (Prism, Swagger UI); binary bodies are exempt.
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

function needsExample(type, media) {
  if (media && media.schema && media.schema.format === "binary") return false;
  return /json|x-www-form-urlencoded|^text\//.test(type);
}

// refusable reports whether request validation can reject a value of parameter p.
function refusable(p) {
  if (!p || typeof p !== "object") return false;
  if (p.required) return true;
  const s = p.schema || {};
  if (s.type && s.type !== "string") return true;
  return ["enum", "pattern", "format", "minLength", "maxLength", "minimum", "maximum"].some((k) => s[k] !== undefined);
}

function hasExample(media) {
  if (!media || typeof media !== "object") return true;
  if (media.example !== undefined || (media.examples && Object.keys(media.examples).length > 0)) return true;
  return Boolean(media.schema && media.schema.example !== undefined);
}

function needsAuth(security) {
  // An empty list, or a list holding an empty requirement, lets anonymous callers in.
  return Array.isArray(security) && security.length > 0 && security.every((req) => Object.keys(req || {}).length > 0);
}

export default function triadOperations(doc) {
  const results = [];
  const paths = (doc && doc.paths) || {};
  for (const [path, item] of Object.entries(paths)) {
    if (!item || typeof item !== "object") continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!op || typeof op !== "object") continue;
      const at = ["paths", path, method];
      const responses = op.responses || {};
      const has = (code) => Object.prototype.hasOwnProperty.call(responses, code);
      const missing = (code, why) =>
        results.push({ message: `${method.toUpperCase()} ${path} must document ${code} (${why})`, path: [...at, "responses"] });

      if (!has("500")) missing("500", "an internal failure");
      if (op["x-triad-database"] !== false && !has("503")) missing("503", "the database may be unavailable; mark operations that never use it x-triad-database: false");
      const params = [...(item.parameters || []), ...(op.parameters || [])];
      if ((params.some(refusable) || op.requestBody) && !has("400")) missing("400", "request validation");
      const security = op.security !== undefined ? op.security : doc.security;
      if (needsAuth(security) && !has("401")) missing("401", "the route requires authentication");
      if (op.requestBody && !has("413")) missing("413", "the body limit");

      for (const [type, media] of Object.entries((op.requestBody && op.requestBody.content) || {})) {
        if (needsExample(type, media) && !hasExample(media)) {
          results.push({ message: `${method.toUpperCase()} ${path}: request body ${type} needs an example`, path: [...at, "requestBody", "content", type] });
        }
      }
      for (const [code, response] of Object.entries(responses)) {
        for (const [type, media] of Object.entries((response && response.content) || {})) {
          if (needsExample(type, media) && !hasExample(media)) {
            results.push({ message: `${method.toUpperCase()} ${path} ${code}: ${type} needs an example`, path: [...at, "responses", code, "content", type] });
          }
        }
      }
    }
  }
  return results;
}
