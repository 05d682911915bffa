// Package e2e holds the cross-surface end-to-end tests of triad. They build the real server binary,
// start it against a fresh PostgreSQL database per test, and drive each surface only through the
// client generated from its spec (gen/<surface>api), with every response validated against the
// spec by impl/testkit/apitest. TestTypeScriptSDK runs the Node tests of the TypeScript SDK (clients/ts)
// against the same kind of server, through reverse proxies that validate every response the same way.
// The SDK is also tested as users get it: TestSDKPackage installs its `npm pack` tarball in a
// scratch project, type-checks it and calls a server; TestSDKCrossOrigin drives a page on another
// origin in headless Chromium through the packed files and the server's CORS answers. TestGoClientRecipe
// runs docs/specs.md's Go client recipe as written.
//
// With TRIAD_E2E_PRISM=1 (`make contract`) every surface is reached through Stoplight Prism in
// validating proxy mode (--errors): a request or response that violates the spec fails the test,
// whichever side (Go, TypeScript, or the server) is wrong.
package e2e
