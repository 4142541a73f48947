// Package codec encrypts Temporal payloads: a converter.PayloadCodec that seals
// every workflow and activity payload with AES-256-GCM under the newest key of
// a keyring, naming the key in the payload's metadata, and the data converter
// every kumo client and worker uses. It also serves the Temporal codec server
// protocol (POST /encode, /decode) for the Web UI.
//
// With a key configured, a payload without kumo's encoding is refused: workers
// and clients never take a payload that someone without the key could have
// written (a raw SDK client's json/plain input). Only the codec endpoint, which
// decodes for showing, passes such payloads through as they are. Search
// attributes and headers (the frontend's plain kumo-subject header) never go
// through the codec.
package codec
