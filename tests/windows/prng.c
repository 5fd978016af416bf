// A stand-in for Windows' bcryptprimitives.dll, for Wine 8 only: Go's
// runtime (1.24+) gets its random bytes from ProcessPrng there, which Wine
// 8 does not have. This fills the buffer through advapi32's
// SystemFunction036 (RtlGenRandom), Wine's own system random source.
// tests/windows/run builds it with MinGW and copies it into a throw-away
// prefix's system32; it is never shipped and never needed on Windows.
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
	while (length > 0) {
		ULONG n = length > 0x40000000 ? 0x40000000 : (ULONG)length;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		length -= n;
	}
	return TRUE;
}

// The DLL's entry point: built with -nostdlib, there is no C runtime to
// start, and nothing to do on load or unload.
BOOL WINAPI DllMainCRTStartup(HINSTANCE dll, DWORD reason, LPVOID reserved)
{
	(void)dll;
	(void)reason;
	(void)reserved;
	return TRUE;
}
