// Package mongotest holds the MongoDB store's tests against a real MongoDB-protocol server: an
// embedded FerretDB (github.com/FerretDB/FerretDB v1.24.0, SQLite backend) listening on an
// ephemeral loopback port. It is a separate package so that FerretDB's large dependency tree is
// only compiled for these tests, never into the server.
package mongotest
