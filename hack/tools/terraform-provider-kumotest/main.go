// Command terraform-provider-kumotest is a small Terraform provider for kumo's
// tests, built with terraform-plugin-framework in its own module so the main module
// does not depend on the framework. hack/build-tools.sh builds it and serves it from
// a filesystem mirror as registry.terraform.io/kumoproj/kumotest.
//
// Its one resource, kumotest_object, is a file <dir>/<id> holding content, with a
// random id chosen at create time: a create that happens twice leaves two files, so
// tests can count duplicates. It can be told to fail (fail = "message") or to take a
// while (delay = "30s"); while a create or update waits it keeps <dir>/<id>.pending,
// so a test can tell that an apply is in flight. The wait ends early when the
// request is cancelled (terraform interrupted, or gone). Its credentials, a nested
// attribute whose token the schema marks sensitive, are only kept in the state:
// they let tests see that sensitive values below the top level are masked.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func main() {
	exitWhenOrphaned()
	err := providerserver.Serve(context.Background(), func() provider.Provider { return &kumotest{} }, providerserver.ServeOpts{
		Address: "registry.terraform.io/kumoproj/kumotest",
	})
	if err != nil {
		log.Fatal(err)
	}
}

// exitWhenOrphaned ends the provider once terraform, its parent, is gone: a plugin
// server otherwise waits forever for a shutdown call that a killed terraform never
// sends, and tests that kill workers would leave providers behind.
func exitWhenOrphaned() {
	parent := os.Getppid()
	go func() {
		for range time.Tick(200 * time.Millisecond) {
			if os.Getppid() != parent {
				os.Exit(1)
			}
		}
	}()
}

type kumotest struct{}

func (p *kumotest) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "kumotest"
}

func (p *kumotest) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (p *kumotest) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p *kumotest) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return &object{} }}
}

func (p *kumotest) DataSources(context.Context) []func() datasource.DataSource { return nil }

type object struct{}

type objectModel struct {
	ID      types.String `tfsdk:"id"`
	Dir     types.String `tfsdk:"dir"`
	Content types.String `tfsdk:"content"`
	Delay   types.String `tfsdk:"delay"`
	Fail    types.String `tfsdk:"fail"`
	// Credentials is nil when the configuration leaves it out.
	Credentials *credentialsModel `tfsdk:"credentials"`
}

type credentialsModel struct {
	User  types.String `tfsdk:"user"`
	Token types.String `tfsdk:"token"`
}

func (o *object) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = "kumotest_object"
}

func (o *object) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A file <dir>/<id> with content; id is random, chosen at create time.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"dir": schema.StringAttribute{
				Required:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"content": schema.StringAttribute{Optional: true},
			"delay":   schema.StringAttribute{Optional: true, Description: "how long a create or update takes (a Go duration)"},
			"fail":    schema.StringAttribute{Optional: true, Description: "when set, creates and updates fail with this message"},
			"credentials": schema.SingleNestedAttribute{
				Optional:    true,
				Description: "kept in the state only; token is sensitive",
				Attributes: map[string]schema.Attribute{
					"user":  schema.StringAttribute{Optional: true},
					"token": schema.StringAttribute{Optional: true, Sensitive: true},
				},
			},
		},
	}
}

func (o *object) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m objectModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	m.ID = types.StringValue(hex.EncodeToString(id))
	if err := write(ctx, m); err != nil {
		resp.Diagnostics.AddError("kumotest_object create failed", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (o *object) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m objectModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := write(ctx, m); err != nil {
		resp.Diagnostics.AddError("kumotest_object update failed", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// write waits for m.Delay (keeping <id>.pending meanwhile), fails if told to, and
// writes the object's file.
func write(ctx context.Context, m objectModel) error {
	dir, file := m.Dir.ValueString(), filepath.Join(m.Dir.ValueString(), m.ID.ValueString())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if d := m.Delay.ValueString(); d != "" {
		delay, err := time.ParseDuration(d)
		if err != nil {
			return fmt.Errorf("delay: %w", err)
		}
		pending := file + ".pending"
		if err := os.WriteFile(pending, nil, 0o644); err != nil {
			return err
		}
		defer os.Remove(pending)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return fmt.Errorf("interrupted after waiting part of %s: %w", delay, ctx.Err())
		}
	}
	if msg := m.Fail.ValueString(); msg != "" {
		return errors.New(msg)
	}
	return os.WriteFile(file, []byte(m.Content.ValueString()), 0o644)
}

func (o *object) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m objectModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	data, err := os.ReadFile(filepath.Join(m.Dir.ValueString(), m.ID.ValueString()))
	if errors.Is(err, fs.ErrNotExist) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("kumotest_object read failed", err.Error())
		return
	}
	// An unset content and an empty file are the same object.
	if !(m.Content.IsNull() && len(data) == 0) {
		m.Content = types.StringValue(string(data))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

func (o *object) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m objectModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	err := os.Remove(filepath.Join(m.Dir.ValueString(), m.ID.ValueString()))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		resp.Diagnostics.AddError("kumotest_object delete failed", err.Error())
	}
}

// ImportState takes "<dir>/<id>", the object's file path.
func (o *object) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	dir, id := filepath.Split(req.ID)
	if id == "" || dir == "" || strings.HasSuffix(id, ".pending") {
		resp.Diagnostics.AddError("kumotest_object import", fmt.Sprintf("import id %q is not <dir>/<id>", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("dir"), filepath.Clean(dir))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
}

var (
	_ resource.ResourceWithImportState = (*object)(nil)
	_ provider.Provider                = (*kumotest)(nil)
)
