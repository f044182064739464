package scripting

import lua "github.com/yuin/gopher-lua"

func openBit(L *lua.LState, g *lua.LTable)      {}
func openCJSON(L *lua.LState, g *lua.LTable)    {}
func openStruct(L *lua.LState, g *lua.LTable)   {}
func openCMsgpack(L *lua.LState, g *lua.LTable) {}
