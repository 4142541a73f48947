package chart

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"

	helmchart "helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/registry"
	orasregistry "oras.land/oras-go/v2/registry"
)

// ociScheme starts a chart reference in an OCI registry.
const ociScheme = "oci://"

// IsOCI reports whether ref names a chart in an OCI registry
// (oci://host/repository/chart[:version]).
func IsOCI(ref string) bool { return strings.HasPrefix(ref, ociScheme) }

// pull fetches the chart ref names from its OCI registry with Helm's registry
// client, which takes credentials from Helm's registry config and, failing
// that, the Docker config ($DOCKER_CONFIG/config.json, ~/.docker/config.json,
// credential helpers included), as helm pull does. Without a version, the
// highest semver tag is taken. The registry is spoken to over HTTPS; plain
// HTTP only when it is on a loopback address (a local or test registry), never
// across a network. It returns the chart and the reference pulled, with its
// version and manifest digest.
func pull(ref string) (*helmchart.Chart, string, error) {
	raw := strings.TrimPrefix(ref, ociScheme)
	parsed, err := orasregistry.ParseReference(raw)
	if err != nil {
		return nil, "", fmt.Errorf("chart %s: %w", ref, err)
	}
	opts := []registry.ClientOption{registry.ClientOptWriter(io.Discard)}
	if loopback(parsed.Registry) {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	c, err := registry.NewClient(opts...)
	if err != nil {
		return nil, "", fmt.Errorf("chart %s: registry client: %w", ref, err)
	}
	if parsed.Reference == "" {
		tags, err := c.Tags(raw)
		if err != nil {
			return nil, "", fmt.Errorf("chart %s: listing its versions: %w", ref, err)
		}
		if len(tags) == 0 {
			return nil, "", fmt.Errorf("chart %s: the repository has no semver-tagged versions; name one (%s:VERSION)", ref, ref)
		}
		raw += ":" + tags[0]
	}
	res, err := c.Pull(raw)
	if err != nil {
		return nil, "", fmt.Errorf("chart %s: %w", ociScheme+raw, err)
	}
	ch, err := loader.LoadArchive(bytes.NewReader(res.Chart.Data))
	if err != nil {
		return nil, "", fmt.Errorf("chart %s: %w", ociScheme+raw, err)
	}
	return ch, ociScheme + raw + "@" + res.Manifest.Digest, nil
}

// loopback reports whether host (host[:port]) is this machine's loopback
// interface.
func loopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
