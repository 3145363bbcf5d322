//go:build viper

package main

import "github.com/spf13/viper"

func init() {
	v := viper.New()
	v.SetEnvPrefix("DSH_FS")
	v.AutomaticEnv()
	mode = func() string { return v.GetString("mode") }
}
