// Shellcode and in-memory loaders.
rule Shellcode_Metasploit_Block_API
{
    meta:
        name = "Metasploit block_api shellcode"
        description = "Prologue of Metasploit/Cobalt Strike block_api shellcode (API hashing stub)"
        severity = "high"
        category = "shellcode"
        confidence = "0.9"
    strings:
        $x86 = { FC E8 8? 00 00 00 60 89 E5 31 ?? 64 8B ?? 30 }
        $x64 = { FC 48 83 E4 F0 E8 C? 00 00 00 41 51 41 50 52 }
    condition:
        any of them
}

rule Loader_VirtualAlloc_CreateThread
{
    meta:
        name = "Shellcode loader (allocate, copy, execute)"
        description = "Allocates executable memory and starts a thread on it, the classic shellcode runner"
        severity = "high"
        category = "shellcode"
        confidence = "0.7"
    strings:
        $va = "VirtualAlloc" ascii wide
        $ct = "CreateThread" ascii wide
        $crt = "CreateRemoteThread" ascii wide
        $wpm = "WriteProcessMemory" ascii wide
        $rtl = "RtlMoveMemory" ascii wide
        $marshal = "Marshal]::Copy" ascii wide nocase
        $getdel = "GetDelegateForFunctionPointer" ascii wide
        $mem_rwx = "0x40" ascii
        // Every VirtualAlloc a quoted element of a comma-separated list: a keyword list (syntax
        // highlighters' Windows API files, API catalogues) names the calls, it does not make them.
        $va_listed = /["']VirtualAlloc(Ex)?["'][ \t\r\n]{0,4},/
    condition:
        filesize < 20MB and not (#va_listed > 0 and #va_listed == #va) and (
            ($crt and $wpm and $va and ($ct or $rtl))
            or ($marshal and $getdel and $va)
            or ($va and $rtl and $ct and $mem_rwx)
        )
}
