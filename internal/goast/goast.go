// Package goast holds what the project's Go-reading tools (mutation, drift) name the
// same way.
package goast

import "go/ast"

// FuncName is "Name" of a function and "Recv.Name" of a method (the receiver's type
// without pointer or type parameters): how mutants and drift's changes name one.
func FuncName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		}
		break
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
