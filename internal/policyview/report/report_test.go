package report

import (
	"reflect"
	"testing"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// TestShortKeepsWhatHolds: the short result drops the settings left at
// their defaults and the shell's layers in words, and keeps every
// setting given and every layer's verdict (each bool of ShellLayers), so
// a verdict added later cannot go missing from the short result unseen.
func TestShortKeepsWhatHolds(t *testing.T) {
	var sh ShellLayers
	v := reflect.ValueOf(&sh).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.String:
			f.SetString("words")
		}
	}
	sh.Mounts, sh.CacheList = &layout.MountPlan{}, []plan.Cache{}
	given := config.Value{Key: "mode", Value: "read-only", Origin: config.Origin{Source: config.KindFlag, Name: "--mode"}}
	full := Policy{Shell: sh, Settings: []config.Value{
		{Key: "tmp", Value: true, Origin: config.Origin{Source: config.KindDefault}}, given}}

	short := full.Short()
	if !reflect.DeepEqual(short.Settings, []config.Value{given}) {
		t.Errorf("short settings %+v, want only the one given", short.Settings)
	}
	got := reflect.ValueOf(short.Shell)
	for i := range got.NumField() {
		name, f := got.Type().Field(i).Name, got.Field(i)
		switch {
		case f.Kind() == reflect.Bool && !f.Bool():
			t.Errorf("Short dropped the verdict %s", name)
		case f.Kind() == reflect.String && name == "Session" && f.String() != "words":
			t.Errorf("Short dropped the session")
		case f.Kind() == reflect.String && name != "Session" && f.String() != "":
			t.Errorf("Short kept the words of %s", name)
		}
	}
	if short.Shell.Mounts != sh.Mounts || short.Shell.CacheList == nil {
		t.Error("Short dropped the mounts or the caches")
	}
	if full.Shell.Writes != "words" {
		t.Error("Short changed the full result")
	}
}
