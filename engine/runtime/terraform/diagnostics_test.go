package terraform

import "testing"

func TestDiagnostics(t *testing.T) {
	cases := []struct{ name, stderr, want string }{
		{"provider error", `
Error: kumotest_object create failed

  with kumotest_object.x,
  on main.tf.json line 1, in resource.kumotest_object.x:
   1: {"terraform":{}}

boom
`, "Error: kumotest_object create failed: boom"},
		{"two errors and a warning", `
Warning: Deprecated attribute

  on main.tf.json line 3:

use something else

Error: Failed to query available provider packages

Could not retrieve the list of available versions for provider
hashicorp/nope: provider registry.terraform.io/hashicorp/nope was not found
in any of the search locations

  - /mirror

Error: second
`, "Error: Failed to query available provider packages: Could not retrieve the list of available versions for provider hashicorp/nope: provider registry.terraform.io/hashicorp/nope was not found in any of the search locations: - /mirror; Error: second"},
		{"framed", "╷\n│ Error: framed\n│ \n│ detail here\n╵\n", "Error: framed: detail here"},
		{"no diagnostics", "fork/exec   failed\n", "fork/exec failed"},
	}
	for _, c := range cases {
		if got := diagnostics(c.stderr); got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestRetryable: diagnostics of a passing outage are retryable, those of a wrong
// configuration are not.
func TestRetryable(t *testing.T) {
	for diags, want := range map[string]bool{
		`Error: creating EC2 Instance: Post "https://ec2.us-east-1.amazonaws.com/": dial tcp 1.2.3.4:443: connect: connection refused`:            true,
		"Error: reading bucket: operation error S3: HeadBucket, https response error StatusCode: 503, RequestID: x, api error ServiceUnavailable": true,
		"Error: creating record: Too Many Requests (429): rate limited":                                                                           true,
		"Error: Failed to install provider: could not query provider registry: i/o timeout":                                                       true,
		"Error: Error acquiring the state lock: resource temporarily unavailable":                                                                 true,
		`Error: Unsupported argument: An argument named "colour" is not expected here.`:                                                           false,
		`Error: Invalid resource type: The provider hashicorp/local does not support resource type "local_nothing".`:                              false,
		"Error: Missing required argument: The argument \"filename\" is required, but no definition was found.":                                   false,
		"Error: creating bucket: BucketAlreadyExists: bucket 5030 exists":                                                                         false,
	} {
		if got := retryable(diags); got != want {
			t.Errorf("retryable(%q) = %v, want %v", diags, got, want)
		}
	}
}

// TestMissingProvider: the diagnostics of a working directory whose provider is
// gone make run initialise it again; other errors do not.
func TestMissingProvider(t *testing.T) {
	for diags, want := range map[string]bool{
		"Error: Required plugins are not installed: The installed provider plugins are not consistent with the packages selected in the dependency lock file: - registry.terraform.io/hashicorp/local: there is no package for registry.terraform.io/hashicorp/local 1.4.0 cached in .terraform/providers": true,
		"Error: Missing required provider: This configuration requires provider registry.terraform.io/hashicorp/local, but that provider isn't available.":                                                                                                                                                 true,
		"Error: Failed to query available provider packages: Could not retrieve the list of available versions for provider hashicorp/local":                                                                                                                                                               false,
		`Error: Unsupported argument: An argument named "colour" is not expected here.`:                                                                                                                                                                                                                    false,
	} {
		if got := missingProvider.MatchString(diags); got != want {
			t.Errorf("missingProvider(%q) = %v, want %v", diags, got, want)
		}
	}
}
