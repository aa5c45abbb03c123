package results

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/quicbench/quicbench/internal/factor"
)

// levelField is where a factor's level is in Levels: the factor, the
// index of the field whose column is the factor's, and how it is stored.
type levelField struct {
	id    factor.ID
	index int
	store factor.Storage
}

// levelFields are the fields of Levels with a factor's column, in factor
// ID order (a test checks that every factor has one and every field a
// factor). A slice read on every trial's Factors: evaluating a paper-scale
// design converts hundreds of thousands of trials.
var levelFields = sync.OnceValue(func() []levelField {
	byColumn := map[string]int{}
	t := reflect.TypeFor[Levels]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("parquet"), ",")
		byColumn[name] = i
	}
	var out []levelField
	for _, f := range factor.Table() {
		if i, ok := byColumn[f.Column]; ok {
			out = append(out, levelField{id: f.ID, index: i, store: f.Store})
		}
	}
	return out
})

// Factors are l's levels as text, as factor.Levels holds them: a flag
// "on" or "off", a count in decimal.
func (l Levels) Factors() factor.Levels {
	var out factor.Levels
	v := reflect.ValueOf(l)
	for _, lf := range levelFields() {
		f := v.Field(lf.index)
		switch lf.store {
		case factor.StoreFlag:
			out.Set(lf.id, flagLevel(f.Bool()))
		case factor.StoreCount:
			out.Set(lf.id, strconv.FormatInt(f.Int(), 10))
		case factor.StoreCores:
			out.Set(lf.id, coresLevel(f.Interface().(*float64)))
		default:
			out.Set(lf.id, f.String())
		}
	}
	return out
}

// LevelsOf are the columns of levels l: a flag is true for "on", a count
// its number.
func LevelsOf(l factor.Levels) (Levels, error) {
	var out Levels
	v := reflect.ValueOf(&out).Elem()
	for _, lf := range levelFields() {
		id := lf.id
		f, text := v.Field(lf.index), l.Of(id)
		switch lf.store {
		case factor.StoreFlag:
			f.SetBool(text == flagLevel(true))
		case factor.StoreCount:
			n, err := strconv.ParseInt(text, 10, 64)
			if err != nil {
				return out, fmt.Errorf("%s %q is not a whole number", factor.Of(id).What, text)
			}
			f.SetInt(n)
		case factor.StoreCores:
			cores := factor.ClientCPU(text).Cores()
			if text != "" && text != string(factor.ClientCPUUnlimited) && cores <= 0 {
				return out, fmt.Errorf("%s %q is no number of cores", factor.Of(id).What, text)
			}
			if cores > 0 {
				f.Set(reflect.ValueOf(&cores))
			}
		default:
			f.SetString(text)
		}
	}
	return out, nil
}

// coresLevel is a cores column's level: "unlimited" for NULL.
func coresLevel(cores *float64) string {
	if cores == nil {
		return string(factor.ClientCPUUnlimited)
	}
	return strconv.FormatFloat(*cores, 'g', -1, 64)
}

// flagLevel is a flag's level: "on" for true (factor.StoreFlag).
func flagLevel(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// upgrade fills the columns a trial recorded by an earlier quicbench
// lacks: its QUIC stack, from its server and controller (quic-go before
// either was recorded).
func (t *Trial) upgrade() {
	if t.Discovery == "" {
		t.Discovery = factor.DiscoveryForced
	}
	if t.DNS == "" {
		t.DNS = factor.DNSPinned
	}
	if t.UDP == "" {
		t.UDP = "pass"
	}
	if t.QUIC != "" {
		return
	}
	t.QUIC = factor.QUICGoNewReno
	if t.QUICServer != "" {
		if q, err := factor.QUICOf(t.QUICServer, t.QUICCC); err == nil {
			t.QUIC = q
		} else {
			t.QUIC = factor.QUIC(string(t.QUICServer) + "+" + string(t.QUICCC)) // a level this build does not have
		}
	}
}
