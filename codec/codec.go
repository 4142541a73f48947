package codec

import (
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/kumoproj/kumo/internal/keyring"
)

// Payload metadata of an encrypted payload: the encoding, as Temporal's samples
// name it, and the ID of the key that sealed it.
const (
	MetadataEncoding  = converter.MetadataEncoding
	EncodingEncrypted = "binary/encrypted"
	MetadataKeyID     = "encryption-key-id"
)

// aad binds the ciphertext to its use as a Temporal payload.
var aad = []byte("kumo temporal payload")

// Codec is the converter.PayloadCodec that encrypts with a keyring.
type Codec struct{ ring *keyring.Ring }

var _ converter.PayloadCodec = (*Codec)(nil)

// New returns the codec of ring.
func New(ring *keyring.Ring) *Codec { return &Codec{ring: ring} }

// Encode seals each payload whole (metadata and data) under the current key.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("encrypt payload: %w", err)
		}
		id, ct, err := c.ring.Encrypt(plain, aad)
		if err != nil {
			return nil, fmt.Errorf("encrypt payload: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{MetadataEncoding: []byte(EncodingEncrypted), MetadataKeyID: []byte(id)},
			Data:     ct,
		}
	}
	return out, nil
}

// Decode opens the payloads Encode sealed and refuses every other one: with a
// key configured, a payload anyone could have written (plain json/plain from a
// client without the key, or not kumo) never reaches a workflow or an
// activity. The SDK then fails the run whose input it was (workflow input), the
// activity (activity input), the update or query (their arguments), before any
// of kumo's code runs. One sealed with a key the ring lacks, or that does not
// open, is an error naming the key.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	return c.decode(payloads, false)
}

// decode is Decode; with passPlain, payloads not sealed by kumo pass as they
// are (for showing them: decoding one reveals nothing).
func (c *Codec) decode(payloads []*commonpb.Payload, passPlain bool) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if p == nil {
			continue
		}
		if enc := string(p.GetMetadata()[MetadataEncoding]); enc != EncodingEncrypted {
			if passPlain {
				out[i] = p
				continue
			}
			return nil, &PlainPayloadError{Encoding: enc}
		}
		id := string(p.GetMetadata()[MetadataKeyID])
		if id == "" {
			return nil, fmt.Errorf("decrypt payload: it is marked %s but names no key (%s)", EncodingEncrypted, MetadataKeyID)
		}
		plain, err := c.ring.Decrypt(id, p.GetData(), aad)
		if err != nil {
			return nil, fmt.Errorf("decrypt payload: %w", err)
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(plain, &orig); err != nil {
			return nil, fmt.Errorf("decrypt payload sealed with key %s: %w", id, err)
		}
		out[i] = &orig
	}
	return out, nil
}

// PlainPayloadError is a payload refused because it is not sealed with kumo's
// codec although a codec key is configured.
type PlainPayloadError struct {
	// Encoding is the payload's metadata encoding ("json/plain", ...).
	Encoding string
}

func (e *PlainPayloadError) Error() string {
	enc := e.Encoding
	if enc == "" {
		enc = "none"
	}
	return fmt.Sprintf("refused a payload that is not encrypted (encoding %s, want %s): a codec key is configured, so every payload must be sealed with it; "+
		"it came from a client or worker without kumo's codec key (KUMO_CODEC_KEY_FILE / --codec-key-file)", enc, EncodingEncrypted)
}

// DataConverter is the data converter of every kumo Temporal client and
// worker: the SDK's default, through the codec of ring; the default alone when
// ring is nil (the codec is off).
func DataConverter(ring *keyring.Ring) converter.DataConverter {
	if ring == nil {
		return converter.GetDefaultDataConverter()
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), New(ring))
}
