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
