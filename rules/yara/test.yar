// The EICAR anti-malware test file: detected so the pipeline can be exercised end to end.
rule Test_EICAR
{
    meta:
        name = "EICAR-Test-File"
        description = "EICAR anti-malware test string (harmless, detected by convention)"
        severity = "critical"
        category = "test"
        confidence = "1.0"
    strings:
        $eicar = "X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*"
    condition:
        $eicar at 0 and filesize <= 128
}

rule Test_EICAR_Base64
{
    meta:
        name = "EICAR-Test-File (base64)"
        description = "Base64-encoded EICAR test string (harmless, detected by convention)"
        severity = "high"
        category = "test"
        confidence = "0.9"
    strings:
        $b64 = "$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*" base64
    condition:
        filesize < 64KB and $b64
}
