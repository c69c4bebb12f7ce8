// Package gosrc reads the string constants a Go source file declares, for
// tests that hold a list or a table of a package to its constants (every
// enum value in its list, every check ID described).
package gosrc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// Const is one constant as file declares it: its name, the name of its
// declared type ("" for an untyped one) and, for a string literal, its
// value (Literal false for any other expression, as calc.CheckOvercommit).
type Const struct {
	Name, Type, Value string
	Literal           bool
}

// Consts returns the constants of file, in source order.
func Consts(file string) ([]Const, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		return nil, err
	}
	var out []Const
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			typ := ""
			if id, ok := v.Type.(*ast.Ident); ok {
				typ = id.Name
			}
			for i, n := range v.Names {
				c := Const{Name: n.Name, Type: typ}
				if i < len(v.Values) {
					if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						c.Value, _ = strconv.Unquote(lit.Value)
						c.Literal = true
					}
				}
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// Typed returns the values of the string constants of type typ in file,
// in source order.
func Typed(file, typ string) ([]string, error) {
	cs, err := Consts(file)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range cs {
		if c.Type == typ && c.Literal {
			out = append(out, c.Value)
		}
	}
	return out, nil
}
