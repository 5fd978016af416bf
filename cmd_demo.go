package main

type demoCmd struct{}

func (demoCmd) Run(a *app) error { return nil }
