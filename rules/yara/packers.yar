// Packers and protectors. Packing alone is not malice, so these are medium/low severity.
rule Packer_UPX
{
    meta:
        name = "UPX-packed executable"
        description = "UPX packer stub: UPX section names or the UPX! marker with its info string"
        severity = "medium"
        category = "packer"
        confidence = "0.9"
    strings:
        $mark = "UPX!"
        $info = "$Info: This file is packed with the UPX executable packer"
        $s0 = { 55 50 58 30 00 00 00 00 }   // "UPX0" section name
        $s1 = { 55 50 58 31 00 00 00 00 }   // "UPX1"
    condition:
        (uint16(0) == 0x5A4D and ($s0 and $s1))
        or (uint32(0) == 0x464C457F and $mark and $info)
        or (uint16(0) == 0x5A4D and $mark and $info)
}

rule Packer_MPRESS
{
    meta:
        name = "MPRESS-packed executable"
        description = "MPRESS packer section names"
        severity = "medium"
        category = "packer"
        confidence = "0.85"
    strings:
        $a = { 2E 4D 50 52 45 53 53 31 }   // ".MPRESS1"
        $b = { 2E 4D 50 52 45 53 53 32 }   // ".MPRESS2"
    condition:
        uint16(0) == 0x5A4D and $a and $b
}

rule Packer_ASPack_Themida
{
    meta:
        name = "ASPack/Themida-protected executable"
        description = "Section names of the ASPack packer or the Themida/WinLicense protector"
        severity = "medium"
        category = "packer"
        confidence = "0.8"
    strings:
        $aspack = { 2E 61 73 70 61 63 6B 00 }   // ".aspack"
        $adata = { 2E 61 64 61 74 61 00 00 }
        $themida = ".themida" ascii
        $winlic = ".winlice" ascii
    condition:
        uint16(0) == 0x5A4D and (($aspack and $adata) or $themida or $winlic)
}
