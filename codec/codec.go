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

// Decode opens the payloads Encode sealed and passes every other one through.
// One sealed with a key the ring lacks, or that does not open, is an error
// naming the key.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[MetadataEncoding]) != EncodingEncrypted {
			out[i] = p
			continue
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

// DataConverter is the data converter of every kumo Temporal client and
// worker: the SDK's default, through the codec of ring; the default alone when
// ring is nil (the codec is off).
func DataConverter(ring *keyring.Ring) converter.DataConverter {
	if ring == nil {
		return converter.GetDefaultDataConverter()
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), New(ring))
}
