// Web shells: server-side code that runs what a request says.
rule Webshell_PHP_Eval_Request
{
    meta:
        name = "PHP web shell"
        description = "PHP that evaluates or executes data taken straight from the HTTP request"
        severity = "high"
        category = "webshell"
        confidence = "0.85"
    strings:
        $php = "<?php" nocase
        $e1 = /(eval|assert|system|shell_exec|passthru|exec|popen|proc_open)\s*\(\s*(base64_decode\s*\(\s*)?(stripslashes\s*\(\s*)?\$_(GET|POST|REQUEST|COOKIE|SERVER)\s*\[/ nocase
        $e2 = /preg_replace\s*\(\s*['"]\/.{0,40}\/e['"]\s*,\s*\$_(GET|POST|REQUEST)/ nocase
        $e3 = /\$_(GET|POST|REQUEST)\s*\[[^\]]{1,40}\]\s*\(\s*\$_(GET|POST|REQUEST)/ nocase
    condition:
        $php and any of ($e*)
}

rule Webshell_JSP_ASPX_Cmd
{
    meta:
        name = "JSP/ASPX command web shell"
        description = "JSP or ASP.NET page that runs a command taken from a request parameter"
        severity = "high"
        category = "webshell"
        confidence = "0.8"
    strings:
        $jsp = /Runtime\.getRuntime\(\)\.exec\s*\(\s*request\.getParameter/ nocase
        $aspx1 = /Process\.Start\s*\(.{0,80}Request(\.Form|\.QueryString)?\s*\[/ nocase
        $aspx2 = /"cmd\.exe".{0,200}Request\.(Form|QueryString|Item)/ nocase
    condition:
        any of them
}
