package rules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Outcomes, SettleKinds and LeaseLostReasons hold every value the root
// declares (the constants named Outcome…, Kind… and Lost…), so that an
// instrument reading them never drops one added later.
func TestValuesAreTheRootsConstants(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../../observe.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string][]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				for _, prefix := range []string{"Outcome", "Kind", "Lost"} {
					if strings.HasPrefix(name.Name, prefix) && i < len(vs.Values) {
						v, err := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
						if err != nil {
							t.Fatal(err)
						}
						declared[prefix] = append(declared[prefix], v)
					}
				}
			}
		}
	}
	for prefix, list := range map[string][]string{"Outcome": Outcomes, "Kind": SettleKinds, "Lost": LeaseLostReasons} {
		got, want := slices.Sorted(slices.Values(list)), slices.Sorted(slices.Values(declared[prefix]))
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s…: rules has %v, the root declares %v", prefix, got, want)
		}
	}
}
