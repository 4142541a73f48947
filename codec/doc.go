// Package codec encrypts Temporal payloads: a converter.PayloadCodec that seals
// every workflow and activity payload with AES-256-GCM under the newest key of
// a keyring, naming the key in the payload's metadata, and the data converter
// every kumo client and worker uses. It also serves the Temporal codec server
// protocol (POST /encode, /decode) for the Web UI.
//
// Payloads without kumo's encoding (histories recorded before the codec was on)
// decode as they are, so old runs still replay and show.
package codec
