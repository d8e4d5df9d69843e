@rem The gpu-rental provider plugin on Windows: node on index.js of this folder (see pulumi-resource-gpu-rental).
@node "%~dp0index.js" %*
