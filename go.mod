module github.com/soundgate/soundgate

go 1.26
