package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kumoproj/kumo/engine"
	"github.com/kumoproj/kumo/engine/input"
	"github.com/kumoproj/kumo/runspec"
)

// manifestExtensions are the files a directory given to -f contributes, as
// kubectl reads them.
var manifestExtensions = []string{".yaml", ".yml", ".json"}

// readFileArg reads what -f names: a file, standard input ("-"), or a directory's
// .yaml, .yml and .json files in lexical order (subdirectories too with
// recursive). A directory without such files is an error.
func readFileArg(path string, recursive bool, stdin io.Reader) ([]input.File, error) {
	if path == "-" {
		data, err := input.Read(stdin, "<stdin>")
		if err != nil {
			return nil, err
		}
		return []input.File{{Name: "<stdin>", Data: data}}, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		data, err := input.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return []input.File{{Name: path, Data: data}}, nil
	}
	var inputs []input.File
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			if p != path && !recursive {
				return fs.SkipDir
			}
			return nil
		case !slices.Contains(manifestExtensions, strings.ToLower(filepath.Ext(p))):
			return nil
		}
		data, err := input.ReadFile(p)
		if err != nil {
			return err
		}
		inputs = append(inputs, input.File{Name: p, Data: data})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		hint := ""
		if !recursive {
			hint = " (-R reads subdirectories too)"
		}
		return nil, fmt.Errorf("%s: no %s files%s", path, strings.Join(manifestExtensions, ", "), hint)
	}
	return inputs, nil
}

// readInputArg reads what -f or -k names into inputs. -k DIR, and -f DIR when
// DIR holds a kustomization file, are rendered with kustomize (offline, from
// the local filesystem), as kubectl kustomize does; -f says so on stderr, since
// kubectl apply -f would not.
func readInputArg(c *cli.Context, stderr io.Writer) (inputs []input.File, name string, err error) {
	file, dir := c.String("spec-file"), c.String("kustomize")
	if err := oneInput(c); err != nil {
		return nil, "", err
	}
	switch {
	case dir != "":
		if c.Bool("recursive") {
			return nil, "", errors.New("-R/--recursive reads the directories of -f; a kustomization names its own (-k)")
		}
		in, err := input.Kustomize(dir)
		return []input.File{in}, dir, err
	}
	if file != "-" {
		if k := input.KustomizationFile(file); k != "" {
			if c.Bool("recursive") {
				return nil, "", fmt.Errorf("%s holds %s: it is rendered with kustomize, which reads the directories the kustomization names; drop -R/--recursive", file, filepath.Base(k))
			}
			fmt.Fprintf(stderr, "%s holds %s: rendering it with kustomize, as -k %s does.\n", file, filepath.Base(k), file)
			in, err := input.Kustomize(file)
			return []input.File{in}, file, err
		}
	}
	inputs, err = readFileArg(file, c.Bool("recursive"), os.Stdin)
	return inputs, file, err
}

// readSpecArg reads -f, -k or --chart into a Spec: a Spec file, or plain
// Kubernetes manifests (given, rendered by kustomize, or rendered from a chart
// for the cluster of rs) converted with -n/--namespace (default: the
// kubeconfig context's namespace) for objects without one. The Spec is
// validated; warnings go to stderr. src names the chart, when one was given.
func readSpecArg(c *cli.Context, rs runspec.RuntimeSettings) (spec *engine.Spec, src *engine.ChartSource, err error) {
	ns := global(c, "namespace")
	var inputs []input.File
	var path string
	if err := oneInput(c); err != nil {
		return nil, nil, err
	}
	if err := onlyWithChart(c); err != nil {
		return nil, nil, err
	}
	if c.String("chart") != "" {
		var in input.File
		in, src, err = renderChart(c, rs, kubeNamespace(c, ns), os.Stderr)
		inputs, path = []input.File{in}, c.String("chart")
	} else {
		inputs, path, err = readInputArg(c, os.Stderr)
	}
	if err != nil {
		return nil, nil, err
	}
	spec, manifests, err := input.ReadInputs(inputs, kubeNamespace(c, ns))
	if err != nil {
		return nil, nil, err
	}
	if !manifests && ns != "" {
		return nil, nil, fmt.Errorf("-n/--namespace %s sets the namespace of plain Kubernetes manifests, but %s is a Spec, whose IDs name their namespaces; for the Temporal namespace use --temporal-namespace %s",
			ns, path, ns)
	}
	if err := spec.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, w := range spec.Warnings() {
		fmt.Fprintln(os.Stderr, "Warning:", w)
	}
	return spec, src, nil
}

// oneInput refuses more than one of -f, -k and --chart.
func oneInput(c *cli.Context) error {
	n := 0
	for _, f := range []string{"spec-file", "kustomize", "chart"} {
		if c.String(f) != "" {
			n++
		}
	}
	if n > 1 {
		return errors.New("give one of -f/--spec-file, -k/--kustomize or --chart")
	}
	return nil
}

// inputGiven reports whether the command was given a ready input (-f, -k or
// --chart) instead of a stack.
func inputGiven(c *cli.Context) bool {
	return c.String("spec-file") != "" || c.String("kustomize") != "" || c.String("chart") != ""
}

// kubeNamespace is ns, else the namespace of the kubeconfig context (--kubeconfig,
// --context, else $KUBECONFIG and ~/.kube/config), else default, as kubectl does.
func kubeNamespace(c *cli.Context, ns string) string {
	if ns != "" {
		return ns
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = global(c, "kubeconfig")
	cfg := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: global(c, "context")})
	if ns, _, err := cfg.Namespace(); err == nil && ns != "" {
		return ns
	}
	return "default"
}

// fileFlags choose the input of preview, apply and spec convert.
func fileFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "spec-file", Aliases: []string{"f", "filename"}, Usage: "a Spec (KusionStack's format) or plain Kubernetes manifests (multi-document YAML, JSON, kind: List): a file, a directory of .yaml/.yml/.json files, or - for standard input"},
		&cli.StringFlag{Name: "kustomize", Aliases: []string{"k"}, Usage: "a Kustomize directory, rendered as kubectl kustomize does (offline: remote bases are refused); -f DIR holding a kustomization.yaml is rendered the same way"},
		&cli.BoolFlag{Name: "recursive", Aliases: []string{"R"}, Usage: "with -f DIR, read its subdirectories too"},
		&cli.StringFlag{Name: "chart", Usage: "a Helm chart (a directory, a .tgz, or oci://host/repo/chart[:version] with credentials from the Docker config), rendered as helm template does with the cluster's capabilities, CRDs included"},
		&cli.StringSliceFlag{Name: "values", Usage: "with --chart, a values file (repeatable; later ones win)"},
		&cli.StringSliceFlag{Name: "set", Usage: "with --chart, a value as helm --set takes it: key=value, a.b=c, list={x,y} (repeatable)"},
		&cli.StringFlag{Name: "release-name", Usage: "with --chart, the Helm release name (.Release.Name; default: the chart's name)"},
		&cli.BoolFlag{Name: "no-hooks", Usage: "with --chart, leave out the chart's Helm hooks (install, upgrade, rollback and delete; test hooks stay, for kumo test), as helm install --no-hooks does"},
	}
}

func specCommand() *cli.Command {
	return &cli.Command{
		Name:  "spec",
		Usage: "work with resource Specs",
		Subcommands: []*cli.Command{{
			Name:  "convert",
			Usage: "print the Spec that apply -f would apply (plain manifests become Kubernetes resources with IDs and an order), to keep or edit",
			Flags: append(fileFlags(), outputFlag(formatYAML, formatJSON)),
			Action: func(c *cli.Context) error {
				if !inputGiven(c) {
					return errors.New("kumo spec convert needs -f FILE, DIR or -, -k DIR, or --chart CHART")
				}
				spec, _, err := readSpecArg(c, settings(c))
				if err != nil {
					return err
				}
				return printOutput(c, spec, nil)
			},
		}},
	}
}
