// Package keyring holds kumo's encryption keys: AES-256 keys in a file, one a
// line with an ID. The newest (last) key encrypts; every key in the file
// decrypts, so a key is rotated by adding a new one and dropping the old one
// only once nothing encrypted with it is still needed. The codec package uses a
// Ring for Temporal payloads, and the backend for the sensitive values it keeps
// in release files.
package keyring
