// Anchor source of the precompiled-header targets (cmake/Pch.cmake).
