// Command template-corpus runs every case of spec/fixtures/templates/cases.json through Go's
// text/template and writes what Go printed (or Go's error text) to expected.json, so berth's
// TypeScript engine can be compared with Go byte for byte without Go on CI.
//
// Number model: the data is decoded with json.Decoder.UseNumber() and every json.Number is then
// turned into an int when its value is integral (and within ±2^53), a float64 otherwise. That is
// berth's model: a JS number that Number.isInteger is an int, any other a float64.
//
// Usage: go run ./scripts/template-corpus [cases.json [expected.json]]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"text/template"
)

type tcase struct {
	Name       string          `json:"name"`
	Tpl        string          `json:"tpl"`
	Data       json.RawMessage `json:"data"`
	MissingKey string          `json:"missingkey,omitempty"`
	Defs       [][2]string     `json:"defs,omitempty"`
	TplName    string          `json:"tplName,omitempty"`
	Funcs      bool            `json:"funcs,omitempty"`
}

type result struct {
	Name   string `json:"name"`
	Output string `json:"output"`
	Error  string `json:"error"`
}

func convert(v interface{}) interface{} {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			panic(err)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int(f)
		}
		return f
	case map[string]interface{}:
		for k, e := range x {
			x[k] = convert(e)
		}
		return x
	case []interface{}:
		for i, e := range x {
			x[i] = convert(e)
		}
		return x
	}
	return v
}

// The extra functions some cases register; spec/actors/templates/go-corpus.spec.ts defines the same.
var funcs = template.FuncMap{
	"upper": func(args ...interface{}) (interface{}, error) {
		if len(args) != 1 {
			return nil, errors.New("upper wants one argument")
		}
		s, ok := args[0].(string)
		if !ok {
			return nil, errors.New("upper wants a string")
		}
		return strings.ToUpper(s), nil
	},
	"fail": func(args ...interface{}) (interface{}, error) { return nil, errors.New("boom") },
	"nothing": func(args ...interface{}) (interface{}, error) { return nil, nil },
	"list": func(args ...interface{}) (interface{}, error) {
		if args == nil {
			args = []interface{}{}
		}
		return args, nil
	},
	"dict": func(args ...interface{}) (interface{}, error) {
		m := map[string]interface{}{}
		for i := 0; i+1 < len(args); i += 2 {
			m[fmt.Sprint(args[i])] = args[i+1]
		}
		return m, nil
	},
	"add": func(args ...interface{}) (interface{}, error) {
		n := 0
		for _, a := range args {
			i, ok := a.(int)
			if !ok {
				return nil, errors.New("add wants ints")
			}
			n += i
		}
		return n, nil
	},
}

func run(c tcase) (out string, errText string) {
	name := c.TplName
	if name == "" {
		name = "tpl"
	}
	t := template.New(name)
	if c.Funcs {
		t.Funcs(funcs)
	}
	if c.MissingKey != "" {
		t.Option("missingkey=" + c.MissingKey)
	}
	for _, d := range c.Defs {
		if _, err := t.New(d[0]).Parse(d[1]); err != nil {
			return "", err.Error()
		}
	}
	if _, err := t.Parse(c.Tpl); err != nil {
		return "", err.Error()
	}
	var data interface{}
	if len(c.Data) > 0 {
		dec := json.NewDecoder(bytes.NewReader(c.Data))
		dec.UseNumber()
		if err := dec.Decode(&data); err != nil {
			panic(fmt.Sprintf("%s: bad data: %v", c.Name, err))
		}
		data = convert(data)
	}
	var buf bytes.Buffer
	err := t.Execute(&buf, data)
	if err != nil {
		return buf.String(), err.Error()
	}
	return buf.String(), ""
}

func main() {
	in, outPath := "spec/fixtures/templates/cases.json", "spec/fixtures/templates/expected.json"
	if len(os.Args) > 1 {
		in = os.Args[1]
	}
	if len(os.Args) > 2 {
		outPath = os.Args[2]
	}
	raw, err := os.ReadFile(in)
	if err != nil {
		panic(err)
	}
	var cases []tcase
	if err := json.Unmarshal(raw, &cases); err != nil {
		panic(err)
	}
	seen := map[string]bool{}
	results := []result{}
	for _, c := range cases {
		if seen[c.Name] {
			panic("duplicate case name " + c.Name)
		}
		seen[c.Name] = true
		o, e := run(c)
		results = append(results, result{c.Name, o, e})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(results); err != nil {
		panic(err)
	}
	if err := os.WriteFile(outPath, b.Bytes(), 0o644); err != nil {
		panic(err)
	}
	fmt.Printf("%d cases -> %s\n", len(results), outPath)
}
