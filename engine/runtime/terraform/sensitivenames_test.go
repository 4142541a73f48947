package terraform

import (
	"slices"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
)

// TestSensitiveNamesNested: a top-level attribute or block is listed when it is
// sensitive or holds, at any depth, something sensitive: an attribute of a
// nested block, of a block nested in that, or of a nested attribute.
func TestSensitiveNamesNested(t *testing.T) {
	plain := &tfjson.SchemaAttribute{Optional: true}
	secret := &tfjson.SchemaAttribute{Optional: true, Sensitive: true}
	block := &tfjson.SchemaBlock{
		Attributes: map[string]*tfjson.SchemaAttribute{
			"name":     plain,
			"password": secret,
			"auth": {AttributeNestedType: &tfjson.SchemaNestedAttributeType{
				NestingMode: tfjson.SchemaNestingModeList,
				Attributes: map[string]*tfjson.SchemaAttribute{"user": plain, "inner": {AttributeNestedType: &tfjson.SchemaNestedAttributeType{
					NestingMode: tfjson.SchemaNestingModeSingle,
					Attributes:  map[string]*tfjson.SchemaAttribute{"key": secret},
				}}},
			}},
			"labels": {AttributeNestedType: &tfjson.SchemaNestedAttributeType{
				NestingMode: tfjson.SchemaNestingModeMap,
				Attributes:  map[string]*tfjson.SchemaAttribute{"v": plain},
			}},
		},
		NestedBlocks: map[string]*tfjson.SchemaBlockType{
			"connection_info": {NestingMode: tfjson.SchemaNestingModeList, Block: &tfjson.SchemaBlock{
				NestedBlocks: map[string]*tfjson.SchemaBlockType{
					"tls": {NestingMode: tfjson.SchemaNestingModeSingle, Block: &tfjson.SchemaBlock{
						Attributes: map[string]*tfjson.SchemaAttribute{"ca": plain, "client_key": secret},
					}},
				},
			}},
			"timeouts": {NestingMode: tfjson.SchemaNestingModeSingle, Block: &tfjson.SchemaBlock{
				Attributes: map[string]*tfjson.SchemaAttribute{"create": plain},
			}},
		},
	}
	got := sensitiveNames(block)
	slices.Sort(got)
	if want := []string{"auth", "connection_info", "password"}; !slices.Equal(got, want) {
		t.Errorf("sensitiveNames = %v, want %v", got, want)
	}
	if got := sensitiveNames(nil); len(got) != 0 {
		t.Errorf("sensitiveNames(nil) = %v", got)
	}
}
